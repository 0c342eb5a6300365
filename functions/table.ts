// The one table of function definitions, read by the Functions host registration (index.ts) and by the
// local runtime. A new area adds its definitions here.
import type { FunctionDefinition } from './definition.js';
import { chatTurnFunctions } from './chat-turn.js';
import { chatFunctions } from './chat.js';
import { healthFunctions } from './health.js';
import { realtimeFunctions } from './realtime.js';
import { sessionFunctions } from './session.js';
import { streamFunctions } from './stream.js';

export const functionDefinitions: readonly FunctionDefinition[] = [
  ...healthFunctions,
  ...sessionFunctions,
  ...chatFunctions,
  ...realtimeFunctions,
  ...streamFunctions,
  ...chatTurnFunctions,
];
