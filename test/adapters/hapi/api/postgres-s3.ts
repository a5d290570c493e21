import * as Lab from '@hapi/lab';
import { postgresS3Stores } from '../../../helpers/test-stores';
import { hapiApiSuite } from './suite';

const { describe, it, before, after } = exports.lab = Lab.script();

hapiApiSuite({ describe, it, before, after }, postgresS3Stores());
