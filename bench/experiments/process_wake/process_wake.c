/*
 * process_wake: how long this machine takes to wake a sleeping process and
 * have it touch some of its memory, by how many processes sleep beside it
 * and how long it slept.  No PostgreSQL involved: it shows what any long
 * poll pays here before the first instruction of the extension runs.
 *
 * Usage: process_wake PROCESSES ROUNDS TOUCH_KB ROTATION
 *   Starts PROCESSES children, each holding 8 MiB of its own memory, all
 *   asleep on a pipe.  ROUNDS times, 20 ms apart, one child is woken with
 *   the time, reads TOUCH_KB of its memory, and reports how long after
 *   the wake it was done.  ROTATION children take turns: PROCESSES wakes
 *   the one that slept longest; 2 wakes one of the two that ran last.
 *   Prints: p50 p99 max, in ms.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHILD_MEMORY (8 << 20)

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
by_value(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* a child: sleeps on its pipe; per wake, touches touch bytes and reports */
static void
child(int wake_fd, int report_fd, size_t touch)
{
	char	   *memory = malloc(CHILD_MEMORY);
	double		sent;

	memset(memory, 1, CHILD_MEMORY);
	while (read(wake_fd, &sent, sizeof sent) == sizeof sent)
	{
		volatile long sum = 0;
		double		took;
		size_t		i;

		for (i = 0; i < touch; i += 64)
			sum += memory[i];
		took = now_ms() - sent;
		if (write(report_fd, &took, sizeof took) != sizeof took)
			break;
	}
	_exit(0);
}

int
main(int argc, char **argv)
{
	int			processes, rounds, rotation, i;
	size_t		touch;
	int		   *wake_fds;
	pid_t	   *children;
	int			report[2];
	double	   *took;

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s PROCESSES ROUNDS TOUCH_KB ROTATION\n", argv[0]);
		return 2;
	}
	processes = atoi(argv[1]);
	rounds = atoi(argv[2]);
	touch = (size_t) atoi(argv[3]) * 1024;
	rotation = atoi(argv[4]);
	if (processes < 1 || rounds < 1 || rotation < 1 || rotation > processes ||
		touch > CHILD_MEMORY || pipe(report) != 0)
		return 2;

	wake_fds = calloc(processes, sizeof(int));
	children = calloc(processes, sizeof(pid_t));
	took = calloc(rounds, sizeof(double));
	for (i = 0; i < processes; i++)
	{
		int			wake[2];

		if (pipe(wake) != 0)
			return 1;
		children[i] = fork();
		if (children[i] == 0)
			child(wake[0], report[1], touch);
		close(wake[0]);
		wake_fds[i] = wake[1];
	}
	sleep(2);					/* every child asleep */

	for (i = 0; i < rounds; i++)
	{
		double		sent = now_ms();

		if (write(wake_fds[i % rotation], &sent, sizeof sent) != sizeof sent ||
			read(report[0], &took[i], sizeof took[i]) != sizeof took[i])
			return 1;
		usleep(20000);
	}
	qsort(took, rounds, sizeof(double), by_value);
	printf("%.2f %.2f %.2f\n", took[rounds / 2], took[(rounds * 99) / 100], took[rounds - 1]);

	for (i = 0; i < processes; i++)
		kill(children[i], SIGTERM);
	return 0;
}
