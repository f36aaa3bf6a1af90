set -x
rm -rf /opt/amazon/efa /opt/amazon/ofi-nccl /opt/aws-ofi-nccl
unset NCCL_NET_PLUGIN NCCL_TUNER_PLUGIN
mkdir -p /var/run/sshd && chmod 0755 /var/run/sshd
mkdir -p /root/.ssh && chmod 700 /root/.ssh
cp /tmp/mpi-ssh-raw/* /root/.ssh/
chmod 600 /root/.ssh/id_rsa
chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys
exec /usr/sbin/sshd -De
