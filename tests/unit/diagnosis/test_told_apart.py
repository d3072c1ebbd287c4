"""Causes that share a log line, told apart by what else the log shows (real lines from the reports
under tests/data): each gets its own fix, and its neighbours keep theirs."""

from __future__ import annotations

from stackctl.diagnosis import Cause, DiagnosisContext, diagnose_log

_NGINX = DiagnosisContext(service="nginx")


def _nginx(*lines: str):
    diagnosis = diagnose_log(list(lines), _NGINX)
    assert diagnosis is not None and diagnosis.cause is Cause.nginx_upstream_down
    assert diagnosis.fix.key == "ports.proxy" and "stackctl logs filter-proxy" in diagnosis.fix.text
    return diagnosis.fix.text


def test_a_refused_upstream_on_another_containers_address_is_a_service_listening_on_localhost_only():
    # trustroots#752: the app in the next container listened on localhost.
    text = _nginx('nginx.1    | 2018/10/21 05:57:35 [error] 58#58: *1 connect() failed (111: Connection refused) while '
                  'connecting to upstream, client: 172.17.0.1, server: localhost, request: "GET /favicon.ico HTTP/1.1", '
                  'upstream: "http://172.17.0.5:3000/favicon.ico", host : "localhost:3080"')
    assert "bind to 0.0.0.0" in text and "172.17.0.5:3000" in text
    assert "container's own loopback" not in text


def test_a_refused_loopback_upstream_from_nginx_in_a_container_is_the_containers_own_loopback():
    # javascript-playground#16: nginx in a container (Docker's bridge client) proxying to 127.0.0.1.
    text = _nginx('2020/10/17 11:50:56 [error] 28#28: *2 connect() failed (111: Connection refused) while connecting '
                  'to upstream, client: 172.17.0.1, server: , request: "GET / HTTP/1.1", upstream: '
                  '"http://127.0.0.1:3001/", host: "localhost:8080"')
    assert "container's own loopback" in text and "host network" in text
    assert "0.0.0.0" not in text


def test_a_refused_loopback_upstream_on_the_host_or_a_socket_is_the_upstream_down():
    # localtunnel-server#56 (a public client: nginx on the host) and gunicorn#661 (a unix socket).
    for line in (('2016/12/15 16:11:55 [error] 5#5: *1 connect() failed (111: Connection refused) while connecting to '
                 'upstream, client: 76.98.113.158, server: , request: "GET /?new HTTP/1.1", upstream: '
                 '"http://127.0.0.1:3000/?new", host: "x.example.com"'),
                 ('2013/12/11 01:53:15 [error] 2149#0: *30 connect() to unix:/home/u/run/gunicorn.sock failed (111: '
                 'Connection refused) while connecting to upstream, client: 184.73.61.142, server: example.com, '
                 'request: "GET / HTTP/1.1", upstream: "http://unix:/home/u/run/gunicorn.sock:/", host: "example.com"')):
        text = _nginx(line)
        assert text.startswith("check the filter-proxy") and "0.0.0.0" not in text
