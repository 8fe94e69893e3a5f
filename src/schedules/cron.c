/*-------------------------------------------------------------------------
 *
 * cron.c
 *		Cron expressions: read, and the next time one is due in a time zone.
 *
 * Five fields, as in Vixie cron and its heirs: minute (0-59), hour (0-23),
 * day of the month (1-31), month (1-12 or jan-dec) and day of the week
 * (0-7 or sun-sat, 0 and 7 both Sunday).  A field is a list of items
 * separated by commas; an item is *, a number or a range a-b, each with an
 * optional step /n (a number with a step runs to the end of the field).
 * When both day fields are restricted (neither starts with *), a day
 * matches either, as in Vixie cron.  @hourly, @daily (@midnight),
 * @weekly, @monthly and @yearly (@annually) stand for their expressions.
 *
 * Times are the wall clock of the schedule's time zone.  The next due time
 * is found on that clock, then turned into an instant:
 *   - a wall-clock time that happens twice (the clock set back) is due at
 *     its first instant only;
 *   - one that never happens (the clock set forward over it) is due at
 *     the first instant after the gap, once however many due times the gap
 *     swallowed.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "queue.h"
#include "schedules/schedules.h"

#include "datatype/timestamp.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

/* A due time is looked for this far ahead: a 29 February needs 8 years. */
#define SEARCH_DAYS		(8 * 366 + 1)

typedef struct CronField
{
	const char *name;
	int			min;
	int			max;
	const char *const *names;	/* names of min, min + 1, ... or NULL */
} CronField;

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
"aug", "sep", "oct", "nov", "dec", NULL};
static const char *const day_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};

static const CronField fields[5] = {
	{"minute", 0, 59, NULL},
	{"hour", 0, 23, NULL},
	{"day of the month", 1, 31, NULL},
	{"month", 1, 12, month_names},
	{"day of the week", 0, 7, day_names},
};

pg_noreturn static void
report_cron(const char *schedule, const char *cron, const char *problem)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 schedule != NULL ?
			 errmsg("invalid cron expression \"%s\" for schedule \"%s\"", cron, schedule) :
			 errmsg("invalid cron expression \"%s\"", cron),
			 errdetail("%s", problem),
			 errhint("Five fields: minute, hour, day of the month, month, day of the week; "
					 "each *, a number, a range a-b or a list of them, with an optional step /n.")));
}

/* A number or (where the field has them) a name at *p, advancing *p; -1 if none. */
static int
read_value(const char **p, const CronField *field)
{
	int			value = 0;
	int			digits = 0;

	while (**p >= '0' && **p <= '9' && digits < 4)
	{
		value = value * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	if (digits > 0)
		return value;
	if (field->names != NULL)
	{
		int			i;

		for (i = 0; field->names[i] != NULL; i++)
			if (pg_strncasecmp(*p, field->names[i], 3) == 0)
			{
				*p += 3;
				return field->min + i;
			}
	}
	return -1;
}

/*
 * One field's text (len bytes at text) into bits (bit v: value v);
 * *star is whether it starts with *.
 */
static uint64
read_field(const char *text, int len, const CronField *field, bool *star,
		   const char *schedule, const char *cron)
{
	char	   *copy = pnstrdup(text, len);
	const char *p = copy;
	uint64		bits = 0;

	*star = *p == '*';
	for (;;)
	{
		int			low;
		int			high;
		int			step = 1;
		int			v;

		if (*p == '*')
		{
			low = field->min;
			high = field->max;
			p++;
		}
		else
		{
			low = read_value(&p, field);
			high = low;
			if (*p == '-')
			{
				p++;
				high = read_value(&p, field);
			}
			else if (*p == '/')
				high = field->max;
		}
		if (*p == '/')
		{
			p++;
			step = read_value(&p, &(CronField) {field->name, 1, field->max, NULL});
		}
		if (low < 0 || high < 0 || step <= 0)
			report_cron(schedule, cron,
						psprintf("The %s field \"%s\" is not a list of *, numbers and ranges with optional steps.",
								 field->name, copy));
		if (low < field->min || high > field->max || low > high)
			report_cron(schedule, cron,
						psprintf("The %s field \"%s\" goes outside %d-%d, or a range runs backwards.",
								 field->name, copy, field->min, field->max));
		for (v = low; v <= high; v += step)
			bits |= UINT64CONST(1) << v;
		if (*p == '\0')
			break;
		if (*p != ',')
			report_cron(schedule, cron,
						psprintf("The %s field \"%s\" has \"%c\" where a comma or its end should be.",
								 field->name, copy, *p));
		p++;
	}
	return bits;
}

/* The expression an @ macro stands for, or NULL. */
static const char *
macro_expression(const char *cron)
{
	static const char *const macros[][2] = {
		{"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
		{"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"}, {"@midnight", "0 0 * * *"},
		{"@hourly", "0 * * * *"},
	};
	int			i;

	for (i = 0; i < (int) lengthof(macros); i++)
		if (pg_strcasecmp(cron, macros[i][0]) == 0)
			return macros[i][1];
	return NULL;
}

/* The expression cron of schedule (NULL: none), read; 22023 if it is none. */
void
queue_cron_parse(const char *cron, const char *schedule, CronSchedule *out)
{
	const char *text = macro_expression(cron) != NULL ? macro_expression(cron) : cron;
	const char *p = text;
	uint64		bits[5];
	bool		stars[5];
	int			n = 0;

	if (*text == '@')
		report_cron(schedule, cron, "The macros are @hourly, @daily, @midnight, @weekly, @monthly, @yearly and @annually.");

	while (*p != '\0')
	{
		const char *start;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && *p != ' ' && *p != '\t')
			p++;
		if (n == 5)
			report_cron(schedule, cron, "It has more than five fields.");
		bits[n] = read_field(start, p - start, &fields[n], &stars[n], schedule, cron);
		n++;
	}
	if (n < 5)
		report_cron(schedule, cron, psprintf("It has %d fields, not five.", n));

	out->minutes = bits[0];
	out->hours = (uint32) bits[1];
	out->days = (uint32) bits[2];
	out->months = (uint16) bits[3];
	/* 7 is Sunday too */
	out->weekdays = (uint8) ((bits[4] | (bits[4] >> 7)) & 0x7F);
	out->days_star = stars[2];
	out->weekdays_star = stars[4];
}

/* The time zone called name, for schedule (or NULL); 22023 if there is none. */
pg_tz *
queue_cron_zone(const char *name, const char *schedule)
{
	pg_tz	   *zone = pg_tzset(name);

	if (zone == NULL || !pg_tz_acceptable(zone))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 schedule != NULL ?
				 errmsg("time zone \"%s\" is not known, for schedule \"%s\"", name, schedule) :
				 errmsg("time zone \"%s\" is not known", name),
				 errhint("Use a name from pg_timezone_names, such as \"Europe/Paris\" or \"UTC\".")));
	return zone;
}

/* Does the day (Julian day number jd, its month and day) match? */
static bool
day_matches(const CronSchedule *cron, int jd, int month, int day)
{
	bool		by_day;
	bool		by_weekday;

	if ((cron->months & (1 << month)) == 0)
		return false;
	by_day = (cron->days & (((uint32) 1) << day)) != 0;
	by_weekday = (cron->weekdays & (1 << j2day(jd))) != 0;
	if (cron->days_star || cron->weekdays_star)
		return by_day && by_weekday;
	return by_day || by_weekday;
}

/*
 * The first wall-clock minute at or after (jd, minute of the day) that
 * matches, as a Julian day and a minute of the day; false if none within
 * SEARCH_DAYS.
 */
static bool
next_wall_minute(const CronSchedule *cron, int *jd, int *minute)
{
	int			last = *jd + SEARCH_DAYS;
	int			from = *minute;

	for (; *jd <= last; (*jd)++, from = 0)
	{
		int			year;
		int			month;
		int			day;
		int			m;

		j2date(*jd, &year, &month, &day);
		if (!day_matches(cron, *jd, month, day))
			continue;
		for (m = from; m < MINS_PER_HOUR * HOURS_PER_DAY; m++)
			if ((cron->hours & (((uint32) 1) << (m / MINS_PER_HOUR))) != 0 &&
				(cron->minutes & (UINT64CONST(1) << (m % MINS_PER_HOUR))) != 0)
			{
				*minute = m;
				return true;
			}
	}
	return false;
}

/* The wall-clock time of instant t in zone, as a timestamp; its offset in *gmtoff. */
static Timestamp
wall_clock(TimestampTz t, pg_tz *zone, long *gmtoff)
{
	struct pg_tm tm;
	fsec_t		fsec;
	int			tz;
	Timestamp	wall;

	if (timestamp2tm(t, &tz, &tm, &fsec, NULL, zone) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range")));
	if (gmtoff != NULL)
		*gmtoff = tm.tm_gmtoff;
	tm.tm_gmtoff = 0;
	tm2timestamp(&tm, fsec, NULL, &wall);
	return wall;
}

/* The offset from UTC (seconds east) of zone at instant t. */
static long
offset_at(TimestampTz t, pg_tz *zone)
{
	long		gmtoff;

	(void) wall_clock(t, zone, &gmtoff);
	return gmtoff;
}

/*
 * The first instant whose wall clock in zone shows wall, or, if the clock
 * skips wall, the first instant after the skip.  Offsets are read a day
 * and more on either side: no zone changes its offset twice that fast.
 */
static TimestampTz
first_instant(Timestamp wall, pg_tz *zone)
{
	long		before = offset_at(wall - 30 * USECS_PER_HOUR, zone);
	long		after = offset_at(wall + 30 * USECS_PER_HOUR, zone);
	TimestampTz early = wall - Max(before, after) * USECS_PER_SEC;
	TimestampTz late = wall - Min(before, after) * USECS_PER_SEC;
	long		offset;

	/* shown at two instants (the clock set back), or at one */
	if (wall_clock(early, zone, NULL) == wall)
		return early;
	if (wall_clock(late, zone, NULL) == wall)
		return late;

	/*
	 * Skipped (the clock set forward): early shows a time before the skip,
	 * late one after it.  The first instant with the later offset, to the
	 * second.
	 */
	offset = offset_at(late, zone);
	while (late - early > USECS_PER_SEC)
	{
		TimestampTz middle = early + (late - early) / 2;

		middle -= middle % USECS_PER_SEC;
		if (middle <= early)
			break;
		if (offset_at(middle, zone) == offset)
			late = middle;
		else
			early = middle;
	}
	return late;
}

/*
 * The first time cron is due in zone strictly after the instant after;
 * false if it is never due within eight years.
 */
bool
queue_cron_next_due(const CronSchedule *cron, pg_tz *zone, TimestampTz after,
				TimestampTz *next)
{
	Timestamp	wall = wall_clock(after, zone, NULL);
	int			jd;
	int			minute;

	/* the wall-clock minute after the one after falls in */
	wall = wall - (wall % USECS_PER_MINUTE + USECS_PER_MINUTE) % USECS_PER_MINUTE
		+ USECS_PER_MINUTE;
	jd = (int) (wall / USECS_PER_DAY) + POSTGRES_EPOCH_JDATE;
	minute = (int) ((wall % USECS_PER_DAY) / USECS_PER_MINUTE);
	if (wall % USECS_PER_DAY < 0)
	{
		jd--;
		minute = (int) ((wall % USECS_PER_DAY + USECS_PER_DAY) / USECS_PER_MINUTE);
	}

	while (next_wall_minute(cron, &jd, &minute))
	{
		Timestamp	candidate = (Timestamp) (jd - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY +
			(Timestamp) minute * USECS_PER_MINUTE;
		TimestampTz instant = first_instant(candidate, zone);

		/*
		 * Its first instant is gone by (after is in the hour the clock
		 * repeats, or in a skip the candidate fell in): it was due then.
		 */
		if (instant > after)
		{
			*next = instant;
			return true;
		}
		if (++minute == MINS_PER_HOUR * HOURS_PER_DAY)
		{
			minute = 0;
			jd++;
		}
	}
	return false;
}
