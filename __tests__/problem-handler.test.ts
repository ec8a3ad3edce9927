import express from 'express';
import request from 'supertest';
import { bearerAuth, problemHandler, type Logger } from '../lib';

const TOKEN = 'tok_problem_handler';

// Whatever the error path does, the answer is problem+json with nothing internal in it.
describe('the Express error path', () => {
  it('answers problem+json, never Express’s HTML page, when the logger throws inside problemHandler', async () => {
    const app = express();
    const throwing: Logger = {
      error: () => {
        throw new Error('logger down');
      },
    };
    app.use(
      '/hooks',
      bearerAuth({ tokens: [TOKEN] }),
      () => {
        throw new Error('internal detail at /srv/app/secret.js:12');
      },
      problemHandler({ logger: throwing }),
    );
    const res = await request(app).post('/hooks').set('Authorization', `Bearer ${TOKEN}`).send('{}');
    expect(res.status).toBe(500);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.text).not.toMatch(/secret\.js|<html|at /);
  });
});
