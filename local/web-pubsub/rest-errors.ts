// The local Web PubSub's refusals: each carries the HTTP status and the code the REST API sends in x-ms-error-code
// and its JSON body; anything else thrown while serving is a 500.

export class WebPubSubRestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The request is malformed or breaks a limit (400). */
export class InvalidRequestError extends WebPubSubRestError {
  constructor(message: string) {
    super('validation_failed', message, 400);
  }
}

/** No token, or one the access key did not sign or that does not fit the request (401). */
export class UnauthorizedError extends WebPubSubRestError {
  constructor(message: string) {
    super('unauthenticated', message, 401);
  }
}

export class NotFoundError extends WebPubSubRestError {
  constructor(message: string) {
    super('not_found', message, 404);
  }
}
