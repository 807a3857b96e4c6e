// The clock every RTP sender of the process runs on: one short interval on the monotonic clock walks
// the senders with a frame due (cheaper than a timer per call, and finer than the playout's 5 ms).
import { createFrameTicker } from "../calls/frame-ticker";

export const rtpClock = createFrameTicker(2);
