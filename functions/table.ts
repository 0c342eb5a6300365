// The one table of function definitions, read by the Functions host registration (index.ts) and by the
// local runtime. A new area adds its definitions here.
import type { FunctionDefinition } from './definition.js';
import { healthFunctions } from './health.js';

export const functionDefinitions: readonly FunctionDefinition[] = [...healthFunctions];
