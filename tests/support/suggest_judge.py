"""A judge for `ci-eval label --suggest-command`: reads {"question_id", "question", "chunk",
"text", "max_grade"} lines on stdin, writes {"chunk", "grade"} lines with the grades of
SUGGESTED (chunks it does not know get none). With --fail it exits 3 and says why on stderr,
as a judge whose model is missing would."""

import json
import sys

# For the projects of labelling.write_project: q1 "alpha please" pools beta, gamma; q2
# "gamma please" pools alpha, beta.
SUGGESTED = {("q1", "beta"): 0, ("q1", "gamma"): 2, ("q2", "alpha"): 1, ("q2", "beta"): 2}


def main() -> int:
    if "--fail" in sys.argv:
        print("loading the model...", file=sys.stderr)
        print("the judge has no model loaded", file=sys.stderr)
        return 3
    for line in sys.stdin:
        item = json.loads(line)
        grade = SUGGESTED.get((item["question_id"], item["chunk"]))
        if grade is not None:
            print(json.dumps({"chunk": item["chunk"], "grade": grade}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
