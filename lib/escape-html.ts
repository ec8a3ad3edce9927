const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * `text` safe inside HTML text and inside a quoted attribute: the five characters that could end
 * either, or start a tag or an entity, written as entities. Shared by the emulator's web console and
 * the inbox console, whose pages render values a sender chose.
 */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c] as string);
}
