// `node --import <this file>`: registers tsx, resolved from the repo's node_modules whatever the
// working folder (a bare `--import tsx` resolves from the working folder).
import 'tsx';
