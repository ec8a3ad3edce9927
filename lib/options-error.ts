/** Codes carried by {@link OptionsError}, one per rule an option can break. */
export type OptionsErrorCode =
  | 'ERR_SW_TOKENS'
  | 'ERR_SW_LIMIT'
  | 'ERR_SW_TIMEOUT'
  | 'ERR_SW_ROUTER'
  | 'ERR_SW_VALIDATION'
  | 'ERR_SW_LOGGER'
  | 'ERR_SW_STORE'
  | 'ERR_SW_NAME'
  | 'ERR_SW_OPTION'
  | 'ERR_SW_MTLS';

/**
 * Thrown when a factory is given options it cannot work with. Raised at construction, never at the
 * first request, so a misconfigured app fails at boot.
 */
export class OptionsError extends TypeError {
  /** Which option was wrong, as a stable code for programs: `ERR_SW_TOKENS`, `ERR_SW_LIMIT`, … */
  readonly code: OptionsErrorCode;

  constructor(code: OptionsErrorCode, where: string, message: string) {
    super(`[service-webhooks] ${where}: ${message}`);
    this.name = 'OptionsError';
    this.code = code;
  }
}
