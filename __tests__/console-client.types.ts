// Compile-only: `npm run typecheck` checks this file; jest never runs it.
import { ConsoleClient, type CreatedWebhook, type WebhookPage } from '../lib/console';
import { createEventRouter, webhookReceiver } from '../lib';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <T extends true>(_proof: T): void => undefined;

export async function typeChecks(client: ConsoleClient): Promise<void> {
  const page = await client.listWebhooks();
  expectType<Equal<typeof page, WebhookPage>>(true);
  // The error reads: Type 'WebhookPage<"one page, not an array: loop over page.webhooks, or over
  // client.iterateWebhooks() for every page">' must have a '[Symbol.iterator]()' method …
  // @ts-expect-error a page is not the array of webhooks
  for (const webhook of page) void webhook;
  // @ts-expect-error nor can it be spread as one
  void [...(await client.listWebhooks())];
  for (const webhook of page.webhooks) void webhook.id;
  for await (const webhook of client.iterateWebhooks()) void webhook.verified;

  const webhook = await client.createWebhook({
    name: 'orders',
    url: 'https://example.com/webhooks',
    subscribedEvents: ['ag.access_pass.issued'],
  });
  expectType<Equal<typeof webhook, CreatedWebhook>>(true);
  expectType<Equal<typeof webhook.privateKey, string>>(true);
  // No `!` needed: the token of a created webhook is a string.
  webhookReceiver({ bearerTokens: [webhook.privateKey], router: createEventRouter() });
}
