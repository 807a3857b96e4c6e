// Calling hours in the schedule's time zone: open now, the wait until the next window (later today,
// another day, across a clock change), and the 400s naming the field.
import { expect, test } from "bun:test";
import { checkSchedule, msUntilOpen } from "../../src/services/campaign-schedule";

const weekdays = {
  timezone: "Europe/Berlin",
  windows: [{ days: ["mon", "tue", "wed", "thu", "fri"], start: "09:00", end: "17:00" }],
} as const;
const schedule = { ...weekdays, windows: weekdays.windows.map((w) => ({ ...w, days: [...w.days] })) };
const minutes = (ms: number) => ms / 60_000;

test("open inside a window, in the schedule's zone (not UTC)", () => {
  // Wednesday 2026-11-25 10:30 in Berlin is 09:30 UTC
  expect(msUntilOpen(schedule, new Date("2026-11-25T09:30:00Z"))).toBe(0);
  // 08:30 UTC is 09:30 Berlin: open; 16:30 UTC is 17:30 Berlin: closed
  expect(msUntilOpen(schedule, new Date("2026-11-25T08:30:00Z"))).toBe(0);
  expect(msUntilOpen(schedule, new Date("2026-11-25T16:30:00Z"))).toBeGreaterThan(0);
  expect(msUntilOpen(null, new Date())).toBe(0);
});

test("the wait until the next opening: later today, tomorrow, after a weekend", () => {
  // Wednesday 07:00 Berlin (06:00 UTC): two hours
  expect(minutes(msUntilOpen(schedule, new Date("2026-11-25T06:00:00Z")))).toBe(120);
  // Wednesday 18:00 Berlin: Thursday 09:00, 15 hours
  expect(minutes(msUntilOpen(schedule, new Date("2026-11-25T17:00:00Z")))).toBe(15 * 60);
  // Saturday 12:00 Berlin: Monday 09:00, 45 hours
  expect(minutes(msUntilOpen(schedule, new Date("2026-11-28T11:00:00Z")))).toBe(45 * 60);
  // seconds into the minute count: the window opens on the minute
  expect(msUntilOpen(schedule, new Date("2026-11-25T06:00:30Z"))).toBe(120 * 60_000 - 30_000);
});

test("a window is read in local time on both sides of a clock change", () => {
  // 2026-03-30 (Monday, after Berlin moved to UTC+2): 09:00 local is 07:00 UTC
  expect(msUntilOpen(schedule, new Date("2026-03-30T07:00:00Z"))).toBe(0);
  expect(msUntilOpen(schedule, new Date("2026-03-30T06:59:00Z"))).toBe(60_000);
});

test("an unknown zone and a window ending before it starts are 400s naming the field", () => {
  const fieldOf = (s: Parameters<typeof checkSchedule>[0]) => {
    try {
      checkSchedule(s);
    } catch (error) {
      return (error as { errors?: { field: string }[] }).errors?.[0]?.field;
    }
  };
  expect(fieldOf({ ...schedule, timezone: "Mars/Olympus" })).toBe("schedule.timezone");
  expect(
    fieldOf({ ...schedule, windows: [...schedule.windows, { days: ["sat"], start: "12:00", end: "12:00" }] }),
  ).toBe("schedule.windows[1].end");
  expect(fieldOf(schedule)).toBeUndefined();
});
