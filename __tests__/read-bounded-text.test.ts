import { BodyTooLargeError, readBoundedText } from '../lib/read-bounded-text';

function streamed(chunks: string[]): { response: Response; pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[pulled++];
      if (chunk === undefined) controller.close();
      else controller.enqueue(new TextEncoder().encode(chunk));
    },
  });
  return { response: new Response(body), pulled: () => pulled };
}

describe('readBoundedText', () => {
  it.each([
    ['within the limit', ['ab', 'cd'], 4, 'abcd'],
    ['empty', [], 4, ''],
    ['multi-byte UTF-8 split across chunks', ['d\u00e9', 'fi'], 16, 'défi'],
  ])('reads a body %s', async (_name, chunks, limit, expected) => {
    expect(await readBoundedText(streamed(chunks).response, limit)).toBe(expected);
  });

  it('stops pulling once the limit is passed', async () => {
    const chunks = Array.from({ length: 1000 }, () => 'x'.repeat(1024));
    const { response, pulled } = streamed(chunks);
    await expect(readBoundedText(response, 4096)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(pulled()).toBeLessThan(10);
  });

  it('reads a response without a body as empty', async () => {
    expect(await readBoundedText(new Response(null, { status: 204 }), 10)).toBe('');
  });
});
