// Calling hours: whether a campaign's schedule is open at an instant, and how long until it opens,
// read in the schedule's IANA time zone with Intl (no library: the runtime's ICU has the zones).
import type { CampaignSchedule, Weekday } from "../db/schema";
import { badRequest } from "../errors";

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
const dayNames: Weekday[] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timezone: string) {
  let format = formats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formats.set(timezone, format);
  }
  return format;
}

/** 400 naming the field: an unknown time zone, or a window whose end is not after its start. */
export function checkSchedule(schedule: CampaignSchedule, field = "schedule") {
  try {
    formatIn(schedule.timezone);
  } catch {
    throw badRequest(`${field}.timezone`, "not an IANA time zone (e.g. Europe/Berlin)");
  }
  schedule.windows.forEach((w, i) => {
    if (minutesOf(w.end) <= minutesOf(w.start))
      throw badRequest(
        `${field}.windows[${i}].end`,
        "must be later than start (a window never crosses midnight: use two)",
      );
  });
}

/** The weekday index (0 = Sunday) and minute of the day at `at` in the time zone. */
function localTime(timezone: string, at: Date) {
  const parts = formatIn(timezone).formatToParts(at);
  const part = (type: string) => parts.find((p) => p.type === type)!.value;
  const day = dayNames.indexOf(part("weekday").toLowerCase().slice(0, 3) as Weekday);
  return { day, minute: Number(part("hour")) * 60 + Number(part("minute")) };
}

/**
 * Milliseconds until the schedule is open: 0 when open now (or no schedule). Worked out in whole local
 * minutes; a change of clocks in between shifts it by the change, which the caller's next look corrects.
 */
export function msUntilOpen(schedule: CampaignSchedule | null, at: Date): number {
  if (!schedule) return 0;
  const { day, minute } = localTime(schedule.timezone, at);
  let best = Number.POSITIVE_INFINITY;
  for (let offset = 0; offset <= 7; offset++) {
    const weekday = dayNames[(day + offset) % 7]!;
    for (const w of schedule.windows) {
      if (!w.days.includes(weekday)) continue;
      const start = minutesOf(w.start);
      const end = minutesOf(w.end);
      if (offset === 0 && minute >= start && minute < end) return 0;
      const inMinutes = offset * 1440 + start - minute;
      if (inMinutes > 0) best = Math.min(best, inMinutes);
    }
  }
  // from the start of the current minute: the window opens on the minute
  return best * 60_000 - at.getUTCSeconds() * 1000 - at.getUTCMilliseconds();
}
