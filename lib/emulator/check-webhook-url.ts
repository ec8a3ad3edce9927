/**
 * The emulator POSTs the handshake and the webhook's token to this URL, so only http(s) is taken:
 * `file:`, `gopher:` or `data:` would send a secret where no receiver is.
 */
export function checkWebhookUrl(url: unknown): string {
  const parsed = typeof url === 'string' && URL.canParse(url) ? new URL(url) : undefined;
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    const shown = typeof url === 'string' ? JSON.stringify(url.slice(0, 100)) : typeof url;
    throw new TypeError(
      `[service-webhooks] emulator: a webhook url must be an absolute http:// or https:// URL (got ${shown})`,
    );
  }
  return url as string;
}
