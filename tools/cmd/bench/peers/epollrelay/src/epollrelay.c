/*
 * epollrelay: a minimal chat relay in C on epoll, the course's own, as a
 * yardstick for chapter 05's loop: chat protocol v1 (docs/protocols.md §1),
 * LOGIN checked against the users file, BROADCAST relayed to every other
 * logged-in client with the authenticated sender, PRIVATE_MSG to its target.
 * QUERY_USER and STATUS_UPDATE are ignored (the experiment does not send
 * them). One thread, level-triggered epoll, non-blocking sockets, TCP_NODELAY;
 * a frame is written at once to each receiver, and what the socket does not
 * take waits in that receiver's buffer for EPOLLOUT (more than MAXPEND
 * bytes: the receiver is dropped).
 *
 *   epollrelay -addr 127.0.0.1:6000 -users users.txt [-login-timeout ignored]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { HDR = 72, NAME = 32, MAXPAYLOAD = 64 << 10, MAXPEND = 1 << 20, MAXFD = 1 << 17 };
enum { LOGIN = 2, BROADCAST = 3, PRIVATE = 4 };

struct conn {
	int open, logged;
	char name[NAME];
	char *in;  size_t inlen, incap;   /* unconsumed input */
	char *out; size_t outlen, outcap; /* unsent output */
	int watching_out;
};

static struct conn conns[MAXFD];
static int epfd, hi; /* hi: one more than the highest fd ever accepted */
static char **unames, **upass; static size_t nusers;

static void die(const char *what) { perror(what); exit(1); }

static void load_users(const char *path) {
	FILE *f = fopen(path, "r");
	if (!f) die(path);
	char line[4096];
	size_t cap = 0;
	while (fgets(line, sizeof line, f)) {
		char *name = strtok(line, " \n"), *pw = strtok(NULL, " \n");
		if (!name || !pw) continue;
		if (nusers == cap) {
			cap = cap ? 2 * cap : 1024;
			unames = realloc(unames, cap * sizeof *unames);
			upass = realloc(upass, cap * sizeof *upass);
		}
		unames[nusers] = strdup(name); upass[nusers] = strdup(pw); nusers++;
	}
	fclose(f);
}

/* check_login: a linear scan is fine for the experiment's sizes at login. */
static int check_login(const char *name, const char *pw, size_t pwlen) {
	for (size_t i = 0; i < nusers; i++)
		if (!strcmp(unames[i], name))
			return strlen(upass[i]) == pwlen && !memcmp(upass[i], pw, pwlen);
	return 0;
}

static void drop(int fd) {
	struct conn *c = &conns[fd];
	close(fd);
	free(c->in); free(c->out);
	memset(c, 0, sizeof *c);
}

static void watch(int fd, int out) {
	struct conn *c = &conns[fd];
	if (c->watching_out == out) return;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (out ? EPOLLOUT : 0), .data.fd = fd };
	epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
	c->watching_out = out;
}

/* flush writes what is pending; 0 if the connection was dropped. */
static int flush(int fd) {
	struct conn *c = &conns[fd];
	while (c->outlen > 0) {
		ssize_t n = write(fd, c->out, c->outlen);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0 && errno == EAGAIN) break;
		if (n < 0) { drop(fd); return 0; }
		memmove(c->out, c->out + n, c->outlen - n);
		c->outlen -= n;
	}
	watch(fd, c->outlen > 0);
	return 1;
}

/* send_to queues one frame (header + payload) for fd and writes it at once
 * if nothing is pending before it. */
static void send_to(int fd, const char *hdr, const char *payload, size_t plen) {
	struct conn *c = &conns[fd];
	size_t n = HDR + plen;
	if (c->outlen + n > MAXPEND) { drop(fd); return; }
	if (c->outlen + n > c->outcap) {
		c->outcap = c->outlen + n > 2 * c->outcap ? c->outlen + n : 2 * c->outcap;
		c->out = realloc(c->out, c->outcap);
	}
	memcpy(c->out + c->outlen, hdr, HDR);
	memcpy(c->out + c->outlen + HDR, payload, plen);
	c->outlen += n;
	if (c->outlen == n) flush(fd);
}

static void header(char *h, int32_t type, uint32_t len, const char *sender, const char *target) {
	memset(h, 0, HDR);
	memcpy(h, &type, 4); memcpy(h + 4, &len, 4); /* little-endian machines, as the original */
	strncpy(h + 8, sender, NAME - 1);
	strncpy(h + 40, target, NAME - 1);
}

/* frame handles one frame from fd; 0 if fd was dropped. */
static int frame(int fd, int32_t type, const char *h, const char *payload, uint32_t plen) {
	struct conn *c = &conns[fd];
	char sender[NAME], target[NAME], out[HDR];
	memcpy(sender, h + 8, NAME); sender[NAME - 1] = 0;
	memcpy(target, h + 40, NAME); target[NAME - 1] = 0;
	if (!c->logged) {
		if (type != LOGIN) { drop(fd); return 0; }
		int ok = check_login(sender, payload, plen);
		for (int i = 0; ok && i < hi; i++)
			if (conns[i].open && conns[i].logged && !strcmp(conns[i].name, sender)) ok = 0;
		header(out, LOGIN, ok ? 2 : 4, "server", sender);
		send_to(fd, out, ok ? "OK" : "FAIL", ok ? 2 : 4);
		if (!ok) { drop(fd); return 0; }
		c->logged = 1;
		strcpy(c->name, sender);
		return 1;
	}
	switch (type) {
	case BROADCAST:
		header(out, BROADCAST, plen, c->name, target);
		for (int i = 0; i < hi; i++)
			if (i != fd && conns[i].open && conns[i].logged) send_to(i, out, payload, plen);
		break;
	case PRIVATE:
		for (int i = 0; i < hi; i++)
			if (conns[i].open && conns[i].logged && !strcmp(conns[i].name, target)) {
				header(out, PRIVATE, plen, c->name, target);
				send_to(i, out, payload, plen);
				break;
			}
		break;
	}
	return 1;
}

/* readable reads once and handles every complete frame. */
static void readable(int fd) {
	static char buf[64 << 10];
	struct conn *c = &conns[fd];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
	if (n <= 0) { drop(fd); return; }
	if (c->inlen + n > c->incap) {
		c->incap = c->inlen + n;
		c->in = realloc(c->in, c->incap);
	}
	memcpy(c->in + c->inlen, buf, n);
	c->inlen += n;
	size_t used = 0;
	while (c->inlen - used >= HDR) {
		int32_t type; uint32_t plen;
		memcpy(&type, c->in + used, 4); memcpy(&plen, c->in + used + 4, 4);
		if (plen > MAXPAYLOAD) { drop(fd); return; }
		if (c->inlen - used < HDR + plen) break;
		if (!frame(fd, type, c->in + used, c->in + used + HDR, plen)) return;
		used += HDR + plen;
	}
	memmove(c->in, c->in + used, c->inlen - used);
	c->inlen -= used;
}

int main(int argc, char **argv) {
	const char *addr = "127.0.0.1:6000", *users = "users.txt";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-addr")) addr = argv[i + 1];
		else if (!strcmp(argv[i], "-users")) users = argv[i + 1];
	}
	signal(SIGPIPE, SIG_IGN);
	load_users(users);
	char host[256];
	const char *colon = strrchr(addr, ':');
	if (!colon) { fprintf(stderr, "-addr: want host:port\n"); return 2; }
	snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(atoi(colon + 1)) };
	if (inet_pton(AF_INET, *host ? host : "0.0.0.0", &sa.sin_addr) != 1) { fprintf(stderr, "bad address\n"); return 2; }
	int ln = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;
	setsockopt(ln, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(ln, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ln, 4096) < 0) die("listen");
	epfd = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = ln }, evs[256];
	epoll_ctl(epfd, EPOLL_CTL_ADD, ln, &ev);
	for (;;) {
		int n = epoll_wait(epfd, evs, 256, -1);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0) die("epoll_wait");
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == ln) {
				int c;
				while ((c = accept4(ln, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					if (c >= MAXFD) { close(c); continue; }
					setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
					conns[c].open = 1;
					if (c >= hi) hi = c + 1;
					struct epoll_event cev = { .events = EPOLLIN | EPOLLRDHUP, .data.fd = c };
					epoll_ctl(epfd, EPOLL_CTL_ADD, c, &cev);
				}
				continue;
			}
			if (!conns[fd].open) continue; /* dropped earlier in this batch */
			if ((evs[i].events & EPOLLOUT) && !flush(fd)) continue;
			if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) readable(fd);
		}
	}
}
