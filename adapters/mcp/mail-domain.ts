import Joi from 'joi';

/**
 * The domain of new_inbox's addresses when none is configured (plugin option `mailDomain`,
 * INBOX_CAPTURE_MAIL_DOMAIN): `.test` is reserved (RFC 2606), so a mail that escapes the
 * capture goes nowhere real.
 */
export const DEFAULT_MAIL_DOMAIN = 'inbox-capture.test';

/** A mail domain: a host name (no `@`, no spaces), at most 253 characters. */
export const mailDomainSchema = Joi.string().hostname().max(253);
