import * as Lab from '@hapi/lab';
import { postgresFsStores } from '../../../helpers/test-stores';
import { hapiApiSuite } from './suite';

const { describe, it, before, after } = exports.lab = Lab.script();

hapiApiSuite({ describe, it, before, after }, postgresFsStores());
