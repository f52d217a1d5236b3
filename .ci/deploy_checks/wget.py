"""A stand-in for the wget options the helm test pod's script uses (busybox's -q, -T, -O -,
--header, --post-data), for a machine without wget: runs.py puts it on the script's PATH. It
asks only the URL it is given (no proxy), and exits 1 with the reason when the request fails."""
import sys
import urllib.request


def parse(args):
    """(url, headers, data, timeout) of a wget command line."""
    args, headers, data, url, timeout = list(args), {}, None, None, 10
    while args:
        a = args.pop(0)
        if a == "-T":
            timeout = float(args.pop(0))
        elif a == "-O":
            if args.pop(0) != "-":
                raise ValueError("the stand-in writes to standard output only (-O -)")
        elif a == "--header":
            k, v = args.pop(0).split(":", 1)
            headers[k] = v.strip()
        elif a == "--post-data":
            data = args.pop(0).encode()
        elif a == "-q":
            pass
        else:
            url = a
    return url, headers, data, timeout


def main(argv=None):
    url, headers, data, timeout = parse(sys.argv[1:] if argv is None else argv)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, data, headers), timeout=timeout) as answer:
            sys.stdout.write(answer.read().decode())
    except Exception as e:  # noqa: BLE001 (wget says why and exits 1, whatever went wrong)
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
