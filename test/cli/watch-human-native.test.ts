import { describeWatchNative, HUMAN_FORMAT } from './support/watch-native-suite';

// watch's human lines from psample, native and per packet (test/cli/support/watch-native-suite.ts).
describeWatchNative({ ...HUMAN_FORMAT, netnsPrefix: 'ovnps-cli-human-native', usersockGroup: 19 });
