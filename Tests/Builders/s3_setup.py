"""Sets up moto's S3 server for the tests (Tests/IntegrationTests/MotoServer.swift), then gets out of the way.

moto checks signatures only after its first INITIAL_NO_AUTH_ACTION_COUNT requests, and then only for access
keys its IAM knows. So, within those first requests: an IAM user allowed s3:*, an access key for it, and the
buckets. Prints the key pair as JSON. Usage: s3_setup.py ENDPOINT BUCKET...

Also: s3_setup.py put ENDPOINT KEY_ID SECRET BUCKET KEY FILE [CONTENT_TYPE [CACHE_CONTROL]]: stores a file as an
object (a source for s3:// tests; with CACHE_CONTROL, GETs of it carry that header); s3_setup.py corrupt ENDPOINT KEY_ID SECRET BUCKET PREFIX: flips the first byte of every
object under PREFIX (whose key contains CONTAINS, when given), keeping its metadata (a shared-tier object whose
checksum no longer matches); s3_setup.py list ENDPOINT KEY_ID SECRET BUCKET PREFIX: prints {key: its
x-amz-meta-thumbd-sha256} of every object under PREFIX as JSON (what a purge left).
"""
import json
import sys

import boto3


def client(service, endpoint, key_id="setup", secret="setup"):
    return boto3.client(
        service, endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id=key_id, aws_secret_access_key=secret)


def setup(endpoint, buckets):
    iam = client("iam", endpoint)
    iam.create_user(UserName="thumbd")
    policy = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    iam.put_user_policy(UserName="thumbd", PolicyName="s3", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="thumbd")["AccessKey"]
    s3 = client("s3", endpoint)
    for bucket in buckets:
        s3.create_bucket(Bucket=bucket)
    print(json.dumps({"id": key["AccessKeyId"], "secret": key["SecretAccessKey"]}))


def put(endpoint, key_id, secret, bucket, key, path, content_type="application/octet-stream", cache_control=None):
    extra = {"CacheControl": cache_control} if cache_control else {}
    with open(path, "rb") as file:
        client("s3", endpoint, key_id, secret).put_object(
            Bucket=bucket, Key=key, Body=file.read(), ContentType=content_type, **extra)


def corrupt(endpoint, key_id, secret, bucket, prefix, contains=""):
    s3 = client("s3", endpoint, key_id, secret)
    count = 0
    for item in s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []):
        if contains not in item["Key"]:
            continue
        obj = s3.get_object(Bucket=bucket, Key=item["Key"])
        body = bytearray(obj["Body"].read())
        body[0] ^= 0xFF
        s3.put_object(Bucket=bucket, Key=item["Key"], Body=bytes(body), ContentType=obj["ContentType"],
                      Metadata=obj["Metadata"])
        count += 1
    print(count)


def list_objects(endpoint, key_id, secret, bucket, prefix):
    s3 = client("s3", endpoint, key_id, secret)
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            head = s3.head_object(Bucket=bucket, Key=item["Key"])
            found[item["Key"]] = head["Metadata"].get("thumbd-sha256", "")
    print(json.dumps(found))


if __name__ == "__main__":
    if sys.argv[1] == "put":
        put(*sys.argv[2:])
    elif sys.argv[1] == "corrupt":
        corrupt(*sys.argv[2:])
    elif sys.argv[1] == "list":
        list_objects(*sys.argv[2:])
    else:
        setup(sys.argv[1], sys.argv[2:])
