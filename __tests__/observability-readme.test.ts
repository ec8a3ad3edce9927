import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express } from 'express';
import { register } from 'prom-client';
import request from 'supertest';
import ts from 'typescript';
import * as library from '../lib';
import * as metrics from '../lib/metrics';
import { deliverEvent } from '../lib/testing';

const ROOT = path.join(__dirname, '..');
const SECTION = readFileSync(path.join(ROOT, 'docs', 'observability.md'), 'utf8');
const BLOCKS = [...SECTION.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);

describe('the Observability guide (docs/observability.md)', () => {
  // Its blocks are type-checked with every other block of the docs, in readme.test.ts.
  it('has the record, OpenTelemetry and Prometheus examples', () => {
    expect(BLOCKS).toHaveLength(3);
    expect(SECTION).toContain('\n## OpenTelemetry traces\n');
    expect(SECTION).toContain('scrape_configs:');
    expect(SECTION.match(/- alert: /g)).toHaveLength(3);
  });

  it('serves the metrics of the Prometheus example as written', async () => {
    const source = BLOCKS.find((block) => block.includes("from 'service-webhooks/metrics'")) as string;
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
      },
    });
    const module = { exports: {} as { app?: Express } };
    const modules: Record<string, unknown> = {
      'service-webhooks': library,
      'service-webhooks/metrics': metrics,
    };
    const requireFor = (name: string): unknown => modules[name] ?? createRequire(__filename)(name);
    process.env.SERVICE_WEBHOOK_TOKEN = 'tok_observability';
    register.clear();
    try {
      new Function('require', 'module', 'exports', outputText)(requireFor, module, module.exports);
      const app = module.exports.app as Express;
      await deliverEvent(
        app,
        'ag.access_pass.issued',
        {},
        { token: 'tok_observability', path: '/webhooks' },
      ).expect(200);
      const scraped = await request(app).get('/metrics').expect(200);
      expect(scraped.headers['content-type']).toMatch(/^text\/plain/);
      expect(scraped.text).toContain(
        'service_webhooks_requests_total{type="ag.access_pass.issued",outcome="unhandled"} 1',
      );
    } finally {
      register.clear();
      delete process.env.SERVICE_WEBHOOK_TOKEN;
    }
  });
});
