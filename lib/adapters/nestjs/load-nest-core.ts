import type * as NestCore from '@nestjs/core' with { 'resolution-mode': 'import' };

let loaded: typeof NestCore | undefined;

/**
 * `@nestjs/core`, when the module is first used, with what to do when it is absent. Nest 12 ships
 * ES modules only; Node ≥ 22.12 requires them as it requires CommonJS.
 */
export function loadNestCore(): typeof NestCore {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded when used
    loaded ??= require('@nestjs/core') as typeof NestCore;
  } catch (error) {
    throw new Error(
      "[service-webhooks] ServiceWebhooksModule: could not load '@nestjs/core'; install NestJS beside service-webhooks (npm install @nestjs/core @nestjs/common reflect-metadata rxjs)",
      { cause: error },
    );
  }
  return loaded;
}
