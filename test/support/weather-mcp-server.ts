// The MCP server the tools tests call: a real one on loopback (test-mcp-server.ts) with a read-only get_weather tool
// whose calls it records, and, when asked, a set_alarm tool that is not read-only.
import { z } from 'zod';
import { startTestMcpServer, type TestMcpServer } from './test-mcp-server.js';

export interface WeatherMcpServer extends TestMcpServer {
  /** The cities get_weather was called for, in order. */
  weatherCalls: string[];
}

export async function startWeatherMcpServer(
  options: { weather?: (city: string) => string; alarm?: true } = {},
): Promise<WeatherMcpServer> {
  const weatherCalls: string[] = [];
  const weather = options.weather ?? ((city: string) => `Sunny in ${city}`);
  const server = await startTestMcpServer((mcp) => {
    mcp.registerTool(
      'get_weather',
      {
        description: 'The weather in a city.',
        inputSchema: z.object({ city: z.string() }),
        annotations: { readOnlyHint: true },
      },
      ({ city }) => {
        weatherCalls.push(city);
        return { content: [{ type: 'text', text: weather(city) }] };
      },
    );
    if (options.alarm)
      mcp.registerTool(
        'set_alarm',
        { description: 'Sets an alarm.', inputSchema: z.object({ at: z.string() }) },
        ({ at }) => ({ content: [{ type: 'text', text: `Alarm at ${at}` }] }),
      );
  });
  return Object.assign(server, { weatherCalls });
}
