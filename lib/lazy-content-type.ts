import type * as ContentTypeModule from 'content-type';

let loaded: typeof ContentTypeModule | undefined;

/**
 * `content-type`, loaded the first time a Content-Type header is not one of the spellings the Service
 * sends (lib/core/event/check-content.ts answers those without parsing): a receiver starts without
 * resolving it (issue 36, `npm run bench -- --cold-start`).
 */
export function contentType(): typeof ContentTypeModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, by design
  loaded ??= require('content-type') as typeof ContentTypeModule;
  return loaded;
}
