/** Wall-clock milliseconds with a fraction, comparable between processes on one machine (benches). */
export const wallClock = () => performance.timeOrigin + performance.now();
