import { checkOptionKeys } from '../check-option-keys';
import { didYouMean } from '../did-you-mean';
import { EVENT_TYPES, isEventType } from '../events/catalogue';
import { ConsoleValidationError } from './console-errors';
import type { CreateWebhookInput } from './console-wire';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The rules of spec 4.2, checked before anything is sent. */
export function checkCreateInput(input: CreateWebhookInput): void {
  const method = 'createWebhook';
  if (typeof input === 'object' && input !== null)
    checkOptionKeys(input, ['name', 'url', 'authMethod', 'subscribedEvents'], 'ConsoleClient.createWebhook');
  if (typeof input?.name !== 'string' || input.name.trim() === '')
    throw new ConsoleValidationError(method, 'name', 'must be a non-empty string');
  const url = typeof input.url === 'string' && URL.canParse(input.url) ? new URL(input.url) : undefined;
  if (url === undefined) throw new ConsoleValidationError(method, 'url', 'must be an absolute URL');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname))) {
    throw new ConsoleValidationError(method, 'url', 'must be https (plain http only for localhost)');
  }
  if (input.authMethod !== undefined && input.authMethod !== 'bearer_token' && input.authMethod !== 'mtls') {
    throw new ConsoleValidationError(method, 'authMethod', "must be 'bearer_token' or 'mtls'");
  }
  if (!Array.isArray(input.subscribedEvents) || input.subscribedEvents.length === 0) {
    throw new ConsoleValidationError(method, 'subscribedEvents', 'must name at least one event type');
  }
  const unknown = input.subscribedEvents.filter((type) => !isEventType(type));
  if (unknown.length > 0) {
    throw new ConsoleValidationError(
      method,
      'subscribedEvents',
      `has types outside the catalogue: ${unknown
        .map((type) => {
          const hint = typeof type === 'string' ? didYouMean(type, EVENT_TYPES) : undefined;
          return `${JSON.stringify(type)}${hint === undefined ? '' : ` (did you mean "${hint}"?)`}`;
        })
        .join(', ')}`,
    );
  }
}
