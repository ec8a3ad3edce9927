import type { DynamicModule, FactoryProvider, ModuleMetadata } from '@nestjs/common' with {
  'resolution-mode': 'import',
};
import { checkOptionKeys } from '../../check-option-keys';
import { loadNestCore } from './load-nest-core';
import { ServiceWebhooks } from './service-webhooks';
import {
  resolveModuleOptions,
  WHERE,
  type ServiceWebhooksModuleOptions,
} from './service-webhooks-module-options';

const OPTIONS = Symbol('service-webhooks module options');

/** The options of {@link ServiceWebhooksModule.forRootAsync}, as Nest's own `forRootAsync` take them. */
export interface ServiceWebhooksModuleAsyncOptions {
  /** Modules whose providers `inject` names (`ConfigModule`). Defaults to none. */
  imports?: ModuleMetadata['imports'];
  /** The providers `useFactory` is called with (`ConfigService`). Defaults to none. */
  inject?: FactoryProvider['inject'];
  /** Returns the module's options, or a promise of them. Required. */
  useFactory: (...args: never[]) => ServiceWebhooksModuleOptions | Promise<ServiceWebhooksModuleOptions>;
}

function moduleOf(optionsProvider: FactoryProvider, imports: ModuleMetadata['imports'] = []): DynamicModule {
  const { DiscoveryModule, DiscoveryService, HttpAdapterHost, MetadataScanner } = loadNestCore();
  return {
    module: ServiceWebhooksModule,
    imports: [DiscoveryModule, ...imports],
    providers: [
      optionsProvider,
      {
        provide: ServiceWebhooks,
        useFactory: (...args: ConstructorParameters<typeof ServiceWebhooks>) => new ServiceWebhooks(...args),
        inject: [OPTIONS, HttpAdapterHost, DiscoveryService, MetadataScanner],
      },
    ],
    exports: [ServiceWebhooks],
  };
}

/**
 * The receiver as a Nest module: `imports: [ServiceWebhooksModule.forRoot({ bearerTokens })]`, and
 * `@OnServiceEvent(type)` on the methods of your providers. It answers `path` on the Express or
 * Fastify platform, before Nest's body parser.
 */
export class ServiceWebhooksModule {
  /** The module with `options`, checked now: a misconfigured app fails where it is written. */
  static forRoot(options: ServiceWebhooksModuleOptions): DynamicModule {
    const resolved = resolveModuleOptions(options);
    return moduleOf({ provide: OPTIONS, useFactory: () => resolved });
  }

  /** The module with options from a factory of other providers (a token from `ConfigService`), checked when it resolves. */
  static forRootAsync(options: ServiceWebhooksModuleAsyncOptions): DynamicModule {
    if (typeof options?.useFactory !== 'function') {
      throw new TypeError(
        `[service-webhooks] ${WHERE}.forRootAsync: useFactory must be a function returning the module's options (with imports and inject for what it needs)`,
      );
    }
    checkOptionKeys(options, ['imports', 'inject', 'useFactory'], `${WHERE}.forRootAsync`);
    const { useFactory, inject = [], imports } = options;
    return moduleOf(
      {
        provide: OPTIONS,
        useFactory: async (...args: never[]) => resolveModuleOptions(await useFactory(...args)),
        inject,
      },
      imports,
    );
  }
}
