// Review repro (issue 20, CLI): `inbox status --url redis://…` with nothing listening must end, not hang.
import { builtPackage, type BuiltPackage } from './support/built-package';
import { runCli } from './support/cli-process';

let built: BuiltPackage;
beforeAll(async () => {
  built = await builtPackage();
}, 180_000);

it.each([['status'], ['dead-letters'], ['replay', '--all']])(
  'inbox %s against an unreachable Redis exits non-zero with a [service-webhooks] error',
  async (...sub) => {
    const cli = runCli(built.bin, ['inbox', ...sub, '--url', 'redis://127.0.0.1:1'], built.env);
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      cli.exited,
      new Promise((resolve) => (timer = setTimeout(resolve, 15_000, 'still running after 15 s'))),
    ]);
    clearTimeout(timer);
    if (code === 'still running after 15 s') cli.child.kill('SIGKILL');
    expect(code).not.toBe('still running after 15 s');
    expect(cli.stderr.join('\n')).toMatch(/\[service-webhooks\]/);
  },
  30_000,
);
