import * as Lab from '@hapi/lab';
import { sqliteS3Stores } from '../../../helpers/test-stores';
import { hapiApiSuite } from './suite';

const { describe, it, before, after } = exports.lab = Lab.script();

hapiApiSuite({ describe, it, before, after }, sqliteS3Stores());
