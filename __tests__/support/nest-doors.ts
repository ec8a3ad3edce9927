import { Module, type INestApplication, type ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ServiceWebhooks, ServiceWebhooksModule } from 'service-webhooks/nestjs';
import { overHttp, PATH, type Door } from './doors';

/** The two platforms a Nest app runs on; the module mounts itself on either. */
export type NestPlatform = 'express' | 'fastify';

/**
 * A Nest app of `metadata` on `platform`, listening on a free 127.0.0.1 port, with Nest's logger
 * off and connections closed on `app.close()` (fetch keeps them alive).
 */
export async function startNestApp(
  platform: NestPlatform,
  metadata: ModuleMetadata,
): Promise<{ app: INestApplication; url: string }> {
  @Module(metadata)
  class AppModule {}
  const options = { logger: false as const, forceCloseConnections: true };
  const app =
    platform === 'express'
      ? await NestFactory.create(AppModule, options)
      : await NestFactory.create(AppModule, new FastifyAdapter(), options);
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}` };
}

function nestDoor(platform: NestPlatform): Door {
  return {
    name: `NestJS ServiceWebhooksModule on ${platform}`,
    async open(options) {
      const { app, url } = await startNestApp(platform, {
        imports: [ServiceWebhooksModule.forRoot({ ...options, path: PATH })],
      });
      const receiver = app.get(ServiceWebhooks);
      return {
        send: (r) => overHttp(url + PATH, r),
        drain: (o) => receiver.drain(o),
        close: () => app.close(),
      };
    },
  };
}

export const nestExpressDoor = nestDoor('express');
export const nestFastifyDoor = nestDoor('fastify');
export const NEST_DOORS: readonly Door[] = [nestExpressDoor, nestFastifyDoor];
