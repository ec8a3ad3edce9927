/** The message kept for a failed try: an Error's message, never the event. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 2000);
  return `a handler threw a ${typeof error}, not an Error`;
}
