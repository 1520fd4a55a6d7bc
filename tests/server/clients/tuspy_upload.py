"""Uploads a file with tuspy, the official tus client for Python, retrying through dropped
connections; prints the upload's URL. Usage: tuspy_upload.py ENDPOINT KEY PATH TITLE"""
import sys

from tusclient import client

endpoint, key, path, title = sys.argv[1:5]
tus = client.TusClient(endpoint, headers={"Authorization": "Bearer " + key})
uploader = tus.uploader(
    file_path=path,
    chunk_size=64 * 1024 * 1024,
    metadata={"filename": path.rsplit("/", 1)[-1], "title": title},
    retries=30,
    retry_delay=0.5,
)
uploader.upload()
print(uploader.url)
