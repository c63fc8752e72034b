#!/usr/bin/env bash
# The browser tests drive Debian's chromium headless (Playwright uses it via executable_path; it never
# downloads a browser). Install it when it is missing: as root with apt-get, else say how.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian's chromium for the browser tests (apt-get install -y chromium)..." >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "chromium is not installed: run 'sudo apt-get install -y chromium' (the browser tests skip without it, and fail in CI)" >&2
fi
