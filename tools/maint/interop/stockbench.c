/*
 * stockbench.c — the original stock server's benchmark, re-created for chapter 04's experiments: one process
 * per client, as the original's multiclient did (docs/originals.md, the stock servers).
 * Written for the course from that description; the original boots the server itself, this one is pointed
 * at a running server.
 *
 *   gcc -O2 -o stockbench tools/maint/interop/stockbench.c
 *   ./stockbench <host> <port> <clients> <total_queries> [random|show|modify]
 *
 * Each child connects once, sends total_queries/clients queries one at a time — show, buy <1..10> <1..10> or
 * sell <1..10> <1..10>, equally likely (or show only, or buy/sell only) — and reads every reply as exactly
 * 8192 bytes with blocking read(2)s, then sends "exit" and closes. The parent times from the first fork to
 * the last wait and prints one line: elapsed seconds, queries, queries per second.
 *
 * Why a C client when tools/cmd/loadgen has a stock mode: loadgen's clients are goroutines on two threads; here
 * 16–64 processes compete with the server for the CPUs, as in the original's measurements, and that changes
 * which server design wins (chapter 04's lesson, experiment 3).
 */
#define _GNU_SOURCE
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { RECORD = 8192 };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* dial connects to host:port, or returns -1. */
static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *list, *a;
	int fd = -1;
	if (getaddrinfo(host, port, &hints, &list) != 0)
		return -1;
	for (a = list; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(list);
	return fd;
}

/* full writes or reads exactly n bytes, or returns -1. */
static int full(int fd, char *buf, size_t n, int writing)
{
	while (n > 0) {
		ssize_t k = writing ? write(fd, buf, n) : read(fd, buf, n);
		if (k <= 0)
			return -1;
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

/* client is one child: its queries, one at a time. It returns the child's exit status. */
static int client(const char *host, const char *port, int queries, int first_kind, int kinds)
{
	static char reply[RECORD];
	char req[64];
	int fd = dial(host, port);
	if (fd < 0) {
		fprintf(stderr, "stockbench: cannot connect to %s:%s\n", host, port);
		return 2;
	}
	srand((unsigned)getpid() ^ (unsigned)time(NULL));
	for (int q = 0; q < queries; q++) {
		int kind = first_kind + rand() % kinds; /* 0 show, 1 buy, 2 sell */
		int len = kind == 0 ? snprintf(req, sizeof req, "show\n")
				    : snprintf(req, sizeof req, "%s %d %d\n", kind == 1 ? "buy" : "sell",
					       rand() % 10 + 1, rand() % 10 + 1);
		if (full(fd, req, (size_t)len, 1) < 0 || full(fd, reply, RECORD, 0) < 0) {
			fprintf(stderr, "stockbench: query %d: the server closed the connection or failed\n", q);
			return 3;
		}
	}
	full(fd, "exit\n", 5, 1);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int first_kind = 0, kinds = 3;
	if (argc == 6 && strcmp(argv[5], "show") == 0)
		kinds = 1;
	else if (argc == 6 && strcmp(argv[5], "modify") == 0)
		first_kind = 1, kinds = 2;
	else if (argc != 5 && !(argc == 6 && strcmp(argv[5], "random") == 0)) {
		fprintf(stderr, "usage: %s <host> <port> <clients> <total_queries> [random|show|modify]\n", argv[0]);
		return 1;
	}
	int clients = atoi(argv[3]), total = atoi(argv[4]);
	if (clients < 1 || total < clients) {
		fprintf(stderr, "stockbench: want clients >= 1 and total_queries >= clients\n");
		return 1;
	}
	int per = total / clients, failed = 0, status;
	signal(SIGPIPE, SIG_IGN);
	double start = now();
	for (int i = 0; i < clients; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("stockbench: fork");
			return 1;
		}
		if (pid == 0)
			_exit(client(argv[1], argv[2], per, first_kind, kinds));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			failed++;
	double elapsed = now() - start;
	if (failed) {
		fprintf(stderr, "stockbench: %d client(s) failed\n", failed);
		return 1;
	}
	printf("%.6f %ld %.1f\n", elapsed, (long)per * clients, (long)per * clients / elapsed);
	return 0;
}
