// The local runtime under benchmark, in a process of its own so its CPU time is not the clients': the product's
// function table (its orchestrators and activities counted as they run) plus the direct baseline, and commands
// that report the runtime's CPU, event-loop use, Cosmos and Web PubSub traffic and durable replays.
import { z } from 'zod';
import type * as df from 'durable-functions';
import type { FunctionDefinition } from '../functions/definition.js';
import { functionDefinitions } from '../functions/table.js';
import type { LocalStats } from '../local/local-stats.js';
import { readHostSettings } from '../local/host-json.js';
import { createLogHandler } from '../local/log.js';
import { startLocalRuntime } from '../local/runtime.js';
import { threadCpuMs } from '../local/thread-cpu.js';
import { childOptions, serveCommands } from './child-process.js';
import { DIRECT_CHAT_ROUTE, directChatFunction } from './direct-chat.js';

const optionsSchema = z.object({ settings: z.record(z.string(), z.string()) });
const turnSchema = z.object({ userId: z.string(), sessionId: z.string(), chatMessageId: z.string() });

export interface RuntimeReady {
  url: string;
  directChatPath: string;
  flushIntervalMs: number;
  flushMaxChars: number;
  maxConcurrentSessions: number | undefined;
  llm: string;
}

/** Cumulative since start, except the counters resetStats() clears (cosmos, webPubSub, durable, serviceBus, taskHub). */
export interface RuntimeUsage {
  /** process.cpuUsage(), in µs: every thread of the process (the local Cosmos DB server's included). */
  cpu: { user: number; system: number };
  /** CPU ms of the app's own thread (the main one), where the system tells it (Linux); else undefined. */
  appThreadCpuMs: number | undefined;
  eventLoop: { idle: number; active: number };
  /** The local Cosmos DB server's thread: its CPU ms (Linux) and event loop. */
  cosmosThread: {
    cpuMs: number | undefined;
    eventLoop: { idle: number; active: number } | undefined;
    /** TLS connections the server accepted since start (each a handshake). */
    connections: number;
  };
  rssBytes: number;
  /**
   * What GET /local/stats answers (LocalRuntime.stats()): the services' own counters, in the units Azure bills. The
   * turn-cost figures come from it, so the bench and a curl of the endpoint agree; `cosmos`, `serviceBus` and
   * `taskHub` below are its parts.
   */
  stats: LocalStats;
  /** The local Cosmos DB server's counters, request units as Azure Cosmos DB would charge them included. */
  cosmos: LocalStats['cosmos'];
  /** `deliveredMessages` and their 2 KB `deliveredMessageUnits`: what Azure Web PubSub bills. */
  webPubSub: {
    restCalls: number;
    sends: number;
    sendBytes: number;
    deliveredMessages: number;
    deliveredMessageUnits: number;
  };
  durable: { replays: number; activities: number };
  /** The operations Azure Service Bus bills, as the local broker counted them. */
  serviceBus: LocalStats['serviceBus'];
  /** What the local durable driver did that a task hub bills for. */
  taskHub: LocalStats['taskHub'];
  /** Since start: rejections unhandled at the end of their tick (each would have ended a plain `npm start`). */
  unhandledRejections: number;
}

const durable = { replays: 0, activities: 0 };
let unhandledRejections = 0;

// A rejection nothing handled by the end of its tick ends a plain `npm start` (Node's default); here the run goes
// on, counting it, so the report shows what the failure did to the turns.
process.on('unhandledRejection', (reason) => {
  unhandledRejections += 1;
  console.error(
    'runtime under benchmark: a rejection went unhandled (npm start would exit; the run goes on):',
  );
  console.error(reason);
});

/** The product's table, each orchestrator run (one replay) and activity run counted. */
function countedFunctions(): FunctionDefinition[] {
  return functionDefinitions.map((definition): FunctionDefinition => {
    if (definition.kind === 'orchestration') {
      const handler: df.OrchestrationHandler = (context) => {
        durable.replays += 1;
        return definition.handler(context);
      };
      return { ...definition, handler };
    }
    if (definition.kind === 'activity') {
      const handler: df.ActivityHandler = (input, context) => {
        durable.activities += 1;
        const result: unknown = definition.handler(input, context);
        return result;
      };
      return { ...definition, handler };
    }
    return definition;
  });
}

serveCommands(async () => {
  const { settings } = optionsSchema.parse(childOptions());
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir: undefined,
    settings,
    logHandler: createLogHandler('error'),
    functions: [...countedFunctions(), directChatFunction],
  });
  const { flushIntervalMs, flushMaxChars } = runtime.config.streaming;
  const ready: RuntimeReady = {
    url: runtime.url,
    directChatPath: `/api/${DIRECT_CHAT_ROUTE}`,
    flushIntervalMs,
    flushMaxChars,
    maxConcurrentSessions: (await readHostSettings()).serviceBus.maxConcurrentSessions,
    llm: runtime.config.llm.provider,
  };
  return {
    ready,
    handlers: {
      /** Waits until no message is in flight and no orchestration step or activity runs. */
      idle: async () => {
        for (let round = 0; round < 3; round += 1) {
          await runtime.serviceBus.idle();
          await runtime.durable.idle();
        }
      },
      usage: (): RuntimeUsage => {
        const { idle, active } = performance.eventLoopUtilization();
        const { restCalls, sends, sendBytes, deliveredMessages, deliveredMessageUnits } =
          runtime.webPubSub.stats();
        const cosmos = runtime.cosmos.diagnostics();
        const stats = runtime.stats();
        return {
          cpu: process.cpuUsage(),
          appThreadCpuMs: threadCpuMs(),
          eventLoop: { idle, active },
          cosmosThread: {
            cpuMs: cosmos.threadCpuMs,
            eventLoop: cosmos.eventLoop,
            connections: cosmos.connections,
          },
          rssBytes: process.memoryUsage().rss,
          stats,
          cosmos: stats.cosmos,
          webPubSub: { restCalls, sends, sendBytes, deliveredMessages, deliveredMessageUnits },
          durable: { ...durable },
          serviceBus: stats.serviceBus,
          taskHub: stats.taskHub,
          unhandledRejections,
        };
      },
      resetStats: () => {
        runtime.cosmos.resetStats();
        runtime.webPubSub.resetStats();
        runtime.serviceBus.resetStats();
        runtime.durable.resetStats();
        durable.replays = 0;
        durable.activities = 0;
      },
      /** How many assistant replies to the turn working memory holds (1 when all is well). */
      storedReplies: async (args: unknown) => {
        const turn = turnSchema.parse(args);
        const memory = await runtime.app.chat.turn.workingMemory.load(turn.userId, turn.sessionId);
        return memory.messages.filter((m) => m.chatMessageId === turn.chatMessageId && m.role === 'assistant')
          .length;
      },
      stop: async () => {
        await runtime.stop();
        process.exit(0);
      },
    },
  };
});
