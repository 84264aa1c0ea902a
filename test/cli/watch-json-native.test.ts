import { describeWatchNative, JSON_FORMAT } from './support/watch-native-suite';

// watch --format json from psample, native and per packet (test/cli/support/watch-native-suite.ts).
describeWatchNative({ ...JSON_FORMAT, netnsPrefix: 'ovnps-cli-json-native', usersockGroup: 18 });
