"""The gold set and what keeps it true: its formats, the index manifest and anchors,
fingerprints and remaps, interchange, and labelling's candidates, pools and judgements."""
