#!/usr/bin/env node
import { HostAgent } from './agent';
import { parseAgentArguments } from './cli';

/** `npm run agent -- --api-url http://127.0.0.1:8080 --api-key KEY --driver docker` */
async function main(): Promise<void> {
  let options;
  try {
    options = parseAgentArguments(process.argv.slice(2));
  } catch (error) {
    const code = (error as { exitCode?: number }).exitCode;
    process.exit(code ?? 2);
  }
  const agent = await HostAgent.start({
    ...options,
    log: (line) => console.log(`${new Date().toISOString()} ${line}`),
  });
  const stop = async () => {
    await agent.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
