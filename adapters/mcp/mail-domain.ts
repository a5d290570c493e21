import Joi from 'joi';

// The default domain is the client's, so agents and Playwright tests make the same addresses.
export { DEFAULT_MAIL_DOMAIN } from '../client/new-inbox';

/** A mail domain: a host name (no `@`, no spaces), at most 253 characters. */
export const mailDomainSchema = Joi.string().hostname().max(253);
