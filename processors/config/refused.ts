/** The spec's error codes a change of `gw.config` can be refused with; the API answers them as they are. */
export type ConfigRefusalCode = 'not_found' | 'invalid_request' | 'unauthorized' | 'service_unavailable';

/** A change of `gw.config` the directory's state (or its input) does not allow; `detail` says what, for `invalid_request`. */
export class ConfigRefused extends Error {
  constructor(
    readonly code: ConfigRefusalCode,
    readonly detail?: string,
    options?: ErrorOptions,
  ) {
    super(detail === undefined ? `config change refused: ${code}` : `config change refused: ${code}: ${detail}`, options);
    this.name = 'ConfigRefused';
  }
}
