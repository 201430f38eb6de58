"""Finds the JSON report in a command's standard output, even when log lines come before it."""
import json


def parse_json_report(text):
    """The first JSON object that starts at the beginning of a line of `text`; ValueError when there is none."""
    decoder = json.JSONDecoder()
    offset = 0
    for line in text.splitlines(keepends=True):
        if line.lstrip().startswith("{"):
            try:
                report, _ = decoder.raw_decode(text, offset + len(line) - len(line.lstrip()))
                if isinstance(report, dict):
                    return report
            except ValueError:
                pass
        offset += len(line)
    raise ValueError("no JSON object in the output")
