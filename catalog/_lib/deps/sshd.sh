set -x &&
test -x /usr/sbin/sshd || (apt-get update && apt-get install -y --no-install-recommends openssh-server) &&
mkdir -p /var/run/sshd  &&
chmod 0755 /var/run/sshd  &&
mkdir -p /root/.ssh &&
chmod 700 /root/.ssh &&
cp /tmp/mpi-ssh-raw/* /root/.ssh/ &&
chmod 600 /root/.ssh/id_rsa &&
chmod 644 /root/.ssh/id_rsa.pub /root/.ssh/authorized_keys &&
/usr/sbin/sshd -De