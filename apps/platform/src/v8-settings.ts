import { setFlagsFromString } from 'node:v8';
import { embeddedV8Flags } from './v8-flags';

// Imported first by main.ts: the embedded process's V8 settings (./v8-flags), before any other module loads.
for (const flag of embeddedV8Flags(process.env)) setFlagsFromString(flag);
