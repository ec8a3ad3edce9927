import type { EmulatorState, EventView } from '../emulator/emulator-state';
import type { EmulatedWebhook, EmulatorChange } from '../emulator/emulator-types';
import type { DeliveryEnvelope } from '../events/build-event';
import { readBoundedText } from '../read-bounded-text';
import { CliFailure } from './cli-errors';

type PublicWebhook = Omit<EmulatedWebhook, 'privateKey'>;
export interface Triggered {
  event: DeliveryEnvelope;
  webhookIds: string[];
}

const TIMEOUT_MS = 15_000;
/** The state of 200 events with their attempts is a few megabytes at most. */
const ANSWER_LIMIT = 32 * 1024 * 1024;

/** The emulator's control API (`/_emulator`), as the CLI drives it from another process. */
export class EmulatorClient {
  constructor(readonly url: string) {}

  state(): Promise<EmulatorState> {
    return this.#call('GET', '/state');
  }

  account(): Promise<{ accountId: string; secretKey: string }> {
    return this.#call('GET', '/account');
  }

  event(id: string): Promise<EventView> {
    return this.#call('GET', `/events/${encodeURIComponent(id)}`);
  }

  trigger(body: {
    type: string;
    layout: 'A' | 'B';
    data: Record<string, unknown>;
    id?: string;
  }): Promise<Triggered> {
    return this.#call('POST', '/events', body);
  }

  /** Delivers an event as is, checked as a scenario's delivery is. */
  deliver(body: { event: DeliveryEnvelope; layout: 'A' | 'B' }): Promise<Triggered> {
    return this.#call('POST', '/deliveries', body);
  }

  resend(id: string): Promise<Triggered> {
    return this.#call('POST', `/events/${encodeURIComponent(id)}/resend`, {});
  }

  register(body: {
    name: string;
    url: string;
    subscribedEvents: string[];
    privateKey: string;
  }): Promise<PublicWebhook> {
    return this.#call('POST', '/webhooks', body);
  }

  handshake(id: string): Promise<PublicWebhook> {
    return this.#call('POST', `/webhooks/${encodeURIComponent(id)}/handshake`, {});
  }

  remove(id: string): Promise<void> {
    return this.#call('DELETE', `/webhooks/${encodeURIComponent(id)}`, {});
  }

  /** Calls `onChange` for each change the emulator streams, until `signal` aborts. */
  async follow(onChange: (change: EmulatorChange) => void, signal: AbortSignal): Promise<void> {
    const res = await this.#fetch('GET', '/stream', undefined, signal);
    if (!res.ok) {
      const text = await readBoundedText(res, ANSWER_LIMIT).catch(() => '');
      let detail: unknown;
      try {
        detail = (JSON.parse(text) as { detail?: unknown }).detail;
      } catch {
        detail = undefined;
      }
      throw new CliFailure(
        typeof detail === 'string'
          ? detail
          : `the emulator at ${this.url} refused its stream (${res.status})`,
      );
    }
    const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const chunk = await reader?.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk === undefined || chunk.done) return;
      buffer += chunk.value;
      // One change is a few kilobytes; a stream that never ends an event is not the emulator's.
      if (buffer.length > 4 * 1024 * 1024)
        throw new CliFailure(`the stream from ${this.url} is not server-sent events`);
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        // Split on \n alone, as server-sent events are: a regex's ^, $ and . also stop at U+2028,
        // which JSON.stringify leaves raw in an event id, and the change would not parse.
        const fields = buffer.slice(0, end).split('\n');
        buffer = buffer.slice(end + 2);
        const data = fields.find((field) => field.startsWith('data: '))?.slice('data: '.length);
        if (
          data !== undefined &&
          fields.some((field) => field.startsWith('event: ') && field !== 'event: hello')
        )
          onChange(JSON.parse(data) as EmulatorChange);
      }
    }
  }

  async #fetch(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    try {
      return await fetch(`${this.url}/_emulator${path}`, {
        method,
        headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal ?? AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new CliFailure(
        `no emulator answers at ${this.url}; start one with \`service-webhooks listen --forward-to <url>\` or \`service-webhooks emulator\`, or pass --emulator <url>`,
      );
    }
  }

  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.#fetch(method, path, body);
    const text = await readBoundedText(res, ANSWER_LIMIT);
    const parsed = (text === '' ? null : JSON.parse(text)) as T & { detail?: string };
    if (!res.ok) throw new CliFailure(parsed?.detail ?? `the emulator answered ${res.status}`);
    return parsed;
  }
}
