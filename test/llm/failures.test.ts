import { describe, expect, it } from 'vitest';
import { errorInfo, httpFailure, isContextOverflow, retryAfterMs, streamErrorFailure } from '../../src/llm/failures.js';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each<[Record<string, string>, number | undefined]>([
    [{ 'retry-after': '7' }, 7000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'Retry-After': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 30_000],
    [{ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }, 0],
    [{ 'retry-after-ms': '1500', 'retry-after': '30' }, 1500],
    [{ 'retry-after-ms': 'soon', 'retry-after': '2' }, 2000],
    [{ 'retry-after': 'later' }, undefined],
    [{}, undefined],
  ])('%j → %s', (headers, expected) => {
    expect(retryAfterMs(headers, now)).toBe(expected);
    expect(retryAfterMs(new Headers(headers), now)).toBe(expected);
  });
});

describe('errorInfo', () => {
  it.each([
    [{ error: { message: 'm', type: 't', code: 'c' } }, { message: 'm', type: 't', code: 'c' }],
    [
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      { type: 'overloaded_error', message: 'Overloaded' },
    ],
    [
      { error: 'plain', code: 429 },
      { message: 'plain', code: '429' },
    ],
    [
      { message: 'flat', type: 'x' },
      { message: 'flat', type: 'x' },
    ],
    ['  text body ', { message: 'text body' }],
    [null, {}],
  ])('%j', (body, info) => {
    expect(errorInfo(body)).toEqual(info);
  });
});

describe('context overflow wordings', () => {
  it.each([
    "This model's maximum context length is 131072 tokens. However, you requested 140211 tokens",
    'prompt is too long: 208310 tokens > 200000 maximum',
    'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000',
    'the request exceeds the available context size, try increasing it',
    'context_length_exceeded',
  ])('%s', (message) => {
    expect(isContextOverflow({ message })).toBe(true);
    expect(httpFailure({ provider: 'p', status: 400, body: { error: { message } } }).code).toBe('CONTEXT_WINDOW_EXCEEDED');
  });

  it.each(["Unsupported parameter: 'max_tokens' is not supported with this model.", 'Model Not Exist', 'max_tokens must be at most 8192'])(
    'not: %s',
    (message) => {
      expect(isContextOverflow({ message })).toBe(false);
    },
  );
});

describe('httpFailure', () => {
  it.each<[number, unknown, string]>([
    [401, {}, 'AUTH'],
    [403, {}, 'AUTH'],
    [402, { error: { message: 'Insufficient Balance' } }, 'QUOTA'],
    [
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API.' } },
      'QUOTA',
    ],
    [429, {}, 'RATE_LIMIT'],
    [408, {}, 'TIMEOUT'],
    [413, {}, 'CONTEXT_WINDOW_EXCEEDED'],
    [404, {}, 'INVALID_REQUEST'],
    [422, {}, 'INVALID_REQUEST'],
    [500, {}, 'SERVER'],
    [503, {}, 'SERVER'],
    [529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'SERVER'],
    [302, {}, 'HTTP_302'],
  ])('%i → %s', (status, body, code) => {
    expect(httpFailure({ provider: 'p', status, body }).code).toBe(code);
  });

  it('keeps the request id and the message', () => {
    expect(
      httpFailure({
        provider: 'anthropic',
        status: 500,
        body: { type: 'error', error: { type: 'api_error', message: 'Internal' } },
        headers: { 'request-id': 'req_1' },
      }),
    ).toEqual({
      code: 'SERVER',
      status: 500,
      message: 'anthropic HTTP 500: Internal',
      requestId: 'req_1',
    });
  });
});

describe('streamErrorFailure', () => {
  it.each([
    [{ error: { type: 'rate_limit_error', message: 'slow' } }, 'RATE_LIMIT'],
    [{ error: { message: 'prompt is too long' } }, 'CONTEXT_WINDOW_EXCEEDED'],
    [{ error: { type: 'insufficient_quota', message: 'x' } }, 'QUOTA'],
    [{ error: { type: 'authentication_error', message: 'x' } }, 'AUTH'],
    [{ error: { type: 'invalid_request_error', message: 'x' } }, 'INVALID_REQUEST'],
    [{ error: { message: 'Internal server error' } }, 'SERVER'],
  ])('%j → %s', (body, code) => {
    expect(streamErrorFailure('p', body).code).toBe(code);
  });
});
