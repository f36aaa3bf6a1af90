rm -rf /opt/amazon
unset NCCL_NET_PLUGIN NCCL_TUNER_PLUGIN
/usr/local/bin/all_reduce_perf_mpi -b 8 -e "$NCCL_MAX_BYTES" -f 2 -g {{gpusPerNode}} -n {{loopbackIterations}} -N {{loopbackCycles}}
