// SPDX-License-Identifier: Apache-2.0
// Reference ceiling for bench/http.sh (CEILING=1): the least an epoll server can do per request on
// this kernel. Two threads, SO_REUSEPORT, edge-triggered; counts CRLFCRLF in what it reads and
// writes one prebuilt 10 KB response per request. No parsing, no limits, no timeouts: not a
// server, only a yardstick for how much of a request's cost is the kernel's.
//   cc -O2 -o bare_epoll bench/bare_epoll.c -lpthread && ./bare_epoll PORT BODY_FILE
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

static char response[70000];
static int response_length;
static int port;

static void *serve(void *unused) {
    (void)unused;
    int one = 1;
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(listener, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0) {
        perror("bind/listen");
        exit(1);
    }
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
    epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
    struct epoll_event events[256];
    char buffer[4096];
    for (;;) {
        int ready = epoll_wait(epoll, events, 256, -1);
        for (int i = 0; i < ready; i++) {
            int fd = events[i].data.fd;
            if (fd == listener) {
                int client;
                while ((client = accept4(listener, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event client_event = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = client};
                    epoll_ctl(epoll, EPOLL_CTL_ADD, client, &client_event);
                }
                continue;
            }
            for (;;) {
                ssize_t n = read(fd, buffer, sizeof buffer);
                if (n <= 0) {
                    if (n == 0 || errno != EAGAIN) close(fd);
                    break;
                }
                for (ssize_t k = 3; k < n; k++) {
                    if (buffer[k] == '\n' && buffer[k - 1] == '\r' && buffer[k - 2] == '\n' && buffer[k - 3] == '\r') {
                        if (write(fd, response, response_length) < 0) break;
                    }
                }
                if (n < (ssize_t)sizeof buffer) break;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PORT BODY_FILE\n", argv[0]);
        return 2;
    }
    port = atoi(argv[1]);
    FILE *file = fopen(argv[2], "rb");
    if (!file) {
        perror(argv[2]);
        return 1;
    }
    char body[65536];
    size_t body_length = fread(body, 1, sizeof body, file);
    fclose(file);
    response_length = snprintf(response, sizeof response,
                               "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                               "Date: Sun, 22 Nov 2026 00:00:00 GMT\r\nContent-Length: %zu\r\n\r\n",
                               body_length);
    memcpy(response + response_length, body, body_length);
    response_length += (int)body_length;
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, serve, NULL);
    pthread_join(threads[0], NULL);
    return 0;
}
