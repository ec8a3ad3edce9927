/** Context attributes a binary-mode request carries as `ce-` headers (CloudEvents HTTP binding 3.1.3). */
const ATTRIBUTES = [
  'specversion',
  'id',
  'source',
  'type',
  'time',
  'dataschema',
  'subject',
  'traceparent',
  'tracestate',
];

function percentDecode(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * A binary-mode delivery as the structured envelope it stands for: attributes from `ce-` headers, the
 * body as `data`. Extension attributes beyond tracing are not read: the Service defines none.
 */
export function binaryEnvelope(
  header: (name: string) => string | undefined,
  data: unknown,
): Record<string, unknown> {
  const envelope: Record<string, unknown> = {};
  for (const name of ATTRIBUTES) {
    const value = header(`ce-${name}`);
    if (value !== undefined) envelope[name] = percentDecode(value);
  }
  envelope.datacontenttype = header('content-type');
  envelope.data = data;
  return envelope;
}
