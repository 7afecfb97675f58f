/*
 * fabric_class_test.c — unit test of the registration guard (mf_fabric_instance_new): a class
 * whose ops table is shorter than this header's, or lacks a mandatory op, or has another class
 * version, gets no instance. The rest of the library reads optional ops (describe, mpit_publish,
 * rma_key, tagged_enable, ...) from any instance without looking at the table's size again, so
 * this refusal is what keeps those reads inside the table. Exits 0 on success.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "fabric/fabric.h"
#include "unit_check.h"

/* An instance of the self fabric's class with its ops table replaced by `ops`: created (then freed) or refused. */
static bool instance_made(const mf_fabric_ops *ops, unsigned version)
{
    mf_fabric_class cls = mf_self_class;
    cls.ops = ops;
    cls.version = version;
    mf_fabric *f = mf_fabric_instance_new(&cls, 0, "");
    if (!f)
        return false;
    CHECK(f->ops == ops && strcmp(f->name, "self0") == 0);
    mf_fabric_instance_free(f);
    return true;
}

int main(void)
{
    mf_fabric_ops ops = *mf_self_class.ops;
    CHECK(instance_made(&ops, MF_FABRIC_CLASS_VERSION));

    /* Built against an older header: the table ends before the last members. */
    ops.size = offsetof(mf_fabric_ops, describe);
    CHECK(!instance_made(&ops, MF_FABRIC_CLASS_VERSION));
    ops.size = sizeof ops - 1;
    CHECK(!instance_made(&ops, MF_FABRIC_CLASS_VERSION));
    ops.size = sizeof ops;

    /* A mandatory op missing; another class version. */
    ops.send = NULL;
    CHECK(!instance_made(&ops, MF_FABRIC_CLASS_VERSION));
    ops.send = mf_self_class.ops->send;
    CHECK(!instance_made(&ops, MF_FABRIC_CLASS_VERSION + 1));
    CHECK(instance_made(&ops, MF_FABRIC_CLASS_VERSION));
    return unit_check_result();
}
