import { eventAnswer } from '../lib/core/problems';

describe('eventAnswer', () => {
  it.each([
    ['a plain id and type', 'evt_01J9', 'ag.access_pass.issued'],
    ['a UUID id', '7f9c2ba4-e88f-11e3-8f5c-0002a5d5c51b', 'ag.device.updated'],
    ['a quote in the id', 'evt"1', 'ag.x'],
    ['a backslash in the type', 'evt_1', 'ag\\x'],
    ['control characters', 'a\nb\tc\u0000d\u001f', 'ag.\r'],
    ['DEL and non-ASCII, not escaped', 'é\u007f€', 'ag.ü'],
    ['a surrogate pair', 'id_😀', 'ag.😀'],
    ['lone surrogates, escaped', 'id_\ud800', 'ag.\udfff'],
    ['a quote as the last character', 'evt', 'ag."'],
  ])('%s: the body is the JSON of the id, the type and the status', (_name, id, type) => {
    const answer = eventAnswer(id, type, 'processed');
    expect(answer.status).toBe(200);
    expect(answer.headers).toEqual({ 'Content-Type': 'application/json; charset=utf-8' });
    expect(answer.body).toBe(JSON.stringify({ id, type, status: 'processed' }));
    expect(JSON.parse(answer.body)).toEqual({ id, type, status: 'processed' });
  });
});
