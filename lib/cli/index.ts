export { buildProgram, EXIT, runCli } from './program';
export type { CliContext } from './cli-context';
