#!/usr/bin/env python3
"""usbnet-ab-summary.py DIR - the per-pair table of docs/results.md (usbnet, stock
vs ours) from a scripts/usbnet-ab.sh run: for usb-gadget and usb-nic (both
directions) and bql (send), each repetition where both sides completed, with
throughput, the probe under load, softirq, observe's RX path and GRO ratio,
then ratios of means and per pair, and softirq per 100 Mbit/s."""
import json,glob,os,statistics as st,sys
